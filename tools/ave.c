/* ave — the driver. `ave check FILE` parses, verifies and checks a kernel file; the compile and
 * run commands live in their own files and register here. */
#include <stdlib.h>
#include <string.h>

#include "../frontend/frontend.h"
#include "../passes/passes.h"
#include "diagcheck.h"
#include "driver.h"

const DriverCommand driver_commands[] = {
#define CMD(name, fn, summary) {name, summary, fn},
#include "commands.def"
#undef CMD
};
const int driver_command_count = sizeof driver_commands / sizeof driver_commands[0];

static void
usage(FILE *f)
{
	fputs("usage: ave <command> [options] FILE\n"
	      "\n"
	      "commands:\n",
	      f);
	for (int i = 0; i < driver_command_count; i++)
		fprintf(f, "  %-10s %s\n", driver_commands[i].name, driver_commands[i].summary);
	fputs("\n"
	      "common options:\n"
	      "  --diagnostics-format=text|json   how to print diagnostics (stderr)\n"
	      "  --version                        print the version\n"
	      "  -h, --help                       this help\n"
	      "\n"
	      "'ave <command> --help' describes a command.\n",
	      f);
}

int
main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("ave %s\n", AVE_VERSION);
		return 0;
	}
	for (int i = 0; i < driver_command_count; i++)
		if (!strcmp(argv[1], driver_commands[i].name))
			return driver_commands[i].run(argc - 1, argv + 1);
	const char *names[16];
	for (int i = 0; i < driver_command_count && i < 16; i++)
		names[i] = driver_commands[i].name;
	const char *near = ir_closest(argv[1], strlen(argv[1]), names,
				      driver_command_count < 16 ? driver_command_count : 16);
	if (near) {
		fprintf(stderr, "ave: unknown command '%s'; did you mean '%s'?\n", argv[1], near);
		return 2;
	}
	if (argv[1][0] == '-')
		fprintf(stderr, "ave: unknown option '%s'\n", argv[1]);
	else
		fprintf(stderr, "ave: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
