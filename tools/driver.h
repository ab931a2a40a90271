/* driver.h — the commands of the `ave` driver; each lives in its own file (cmd_*.c). */
#ifndef AVE_DRIVER_H
#define AVE_DRIVER_H

#include <stdbool.h>
#include <stdio.h>

#include "../ir/ir.h"
#include "diagcheck.h"

#ifndef AVE_VERSION
#define AVE_VERSION "0.1.0"
#endif

typedef struct DriverCommand {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv); /* argv[0] is the command name */
} DriverCommand;

extern const DriverCommand driver_commands[];
extern const int driver_command_count;

/* Options every command accepts; returns true when argv[i] was one of them. */
typedef struct DriverCommon {
	bool json;
	const char *input;
	const char *tool; /* "ave compile": names diagnostics without a location */
} DriverCommon;
bool driver_common_opt(DriverCommon *c, const char *arg);
/* Context with the sink installed according to the options. */
IrCtx *driver_ctx(DriverCommon *o, DiagSink *sink);

#define CMD(name, fn, summary) int fn(int argc, char **argv);
#include "commands.def"
#undef CMD

#endif
