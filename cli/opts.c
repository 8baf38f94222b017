/*
 * Option parsing shared by the sub-commands: "--name VALUE",
 * "--name=VALUE" and flags, each at most once; decimal counts without
 * atoi. Errors are one line on stderr naming the sub-command.
 */
#include <string.h>

#include "cli.h"

/* "--name" or "--name=value"; returns the spec or NULL. */
static const struct cli_opt *find_opt(const struct cli_opt *specs, size_t n, const char *arg,
				      const char **inline_value)
{
	size_t i;

	*inline_value = NULL;
	for (i = 0; i < n; i++) {
		size_t len = strlen(specs[i].name);

		if (strncmp(arg, specs[i].name, len) != 0)
			continue;
		if (arg[len] == '\0')
			return &specs[i];
		if (arg[len] == '=') {
			*inline_value = arg + len + 1;
			return &specs[i];
		}
	}
	return NULL;
}

int cli_take_opt(const char *cmd, const struct cli_opt *specs, size_t n, int argc, char **argv,
		 int i)
{
	const char *val;
	const struct cli_opt *s = find_opt(specs, n, argv[i], &val);

	if (s == NULL) {
		cli_error(cmd, "unknown option '%.100s' (see spfkit %s --help)", argv[i], cmd);
		return -1;
	}
	if (s->flag != NULL) {
		if (val != NULL) {
			cli_error(cmd, "option %s takes no value", s->name);
			return -1;
		}
		*s->flag = 1;
		return i + 1;
	}
	if (val == NULL) {
		if (i + 1 >= argc) {
			cli_error(cmd, "option %s needs a value", s->name);
			return -1;
		}
		val = argv[++i];
	}
	if (*s->value != NULL) {
		cli_error(cmd, "option %s given twice", s->name);
		return -1;
	}
	*s->value = val;
	return i + 1;
}

int cli_parse_count(const char *s, unsigned long max, int *out)
{
	unsigned long v = 0;

	if (*s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		if (!spfkit__is_digit((unsigned char)*s))
			return -1;
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > max)
			return -1;
	}
	if (v == 0)
		return -1;
	*out = (int)v;
	return 0;
}

int cli_take_args(const char *cmd, const struct cli_opt *specs, size_t n, int argc, char **argv,
		  const char **positional)
{
	int i = 1;

	*positional = NULL;
	while (i < argc) {
		if (strncmp(argv[i], "--", 2) != 0) {
			if (*positional != NULL) {
				cli_error(cmd, "unexpected argument '%.100s' (one DOMAIN only)", argv[i]);
				return -1;
			}
			*positional = argv[i++];
			continue;
		}
		i = cli_take_opt(cmd, specs, n, argc, argv, i);
		if (i < 0)
			return -1;
	}
	return 0;
}
