/* devices.c — opening a GPU device where there is none fails cleanly, with the reason. */
#include "capi.h"

int
main(void)
{
	AveContext c;
	AveDevice d;
	CHECK_OK(aveContextCreate(&c));
	aveContextSetDiagnosticHandler(c, print_diag, NULL);
	printf("cuda: %s\n", aveResultGetName(aveDeviceOpen(c, "cuda", 0, &d)));
	printf("hip: %s\n", aveResultGetName(aveDeviceOpen(c, "hip", 0, &d)));
	printf("tpu: %s\n", aveResultGetName(aveDeviceOpen(c, "tpu", 0, &d)));
	printf("host 1: %s\n", aveResultGetName(aveDeviceOpen(c, "host", 1, &d)));
	aveContextDestroy(c);
	return 0;
}
