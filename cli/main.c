/*
 * `spfkit`: the command line front of libspfkit. Sub-commands `check`
 * (for receivers), `lint`, `tree` and `flatten` (for domain owners);
 * main() only dispatches and answers --help and --version.
 */
#include <string.h>

#include "cli.h"
#include "flatten.h"

static void usage(FILE *f)
{
	fputs("Usage: spfkit COMMAND [options]\n"
	      "       spfkit --help | --version\n"
	      "\n"
	      "Commands:\n"
	      "  check   evaluate SPF (RFC 7208) for an SMTP client, or a batch of them,\n"
	      "          and print the result with its Received-SPF and\n"
	      "          Authentication-Results header fields\n"
	      "  lint    check a domain's SPF record and everything it includes: errors\n"
	      "          receivers would see, records that do not mean what they seem,\n"
	      "          worst-case DNS lookup counts, each with its fix\n"
	      "  tree    show a domain's include/redirect tree: per record its lookups,\n"
	      "          void lookups, authorised addresses, TTL and macros; as text,\n"
	      "          JSON, Graphviz dot, SVG, or an HTML page with lint's findings\n"
	      "          and flatten's proposal\n"
	      "  flatten write a domain's SPF tree as equivalent ip4/ip6 records under the\n"
	      "          10-lookup limit (a BIND zone fragment), proven equal by\n"
	      "          evaluating both; --check-live compares what is published\n"
	      "\n"
	      "`spfkit COMMAND --help` describes a command and its exit status.\n",
	      f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		cli_error(NULL, "missing command (see spfkit --help)");
		return CLI_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		if (argc > 2 && strcmp(argv[2], "check") == 0)
			cli_check_usage(stdout);
		else if (argc > 2 && strcmp(argv[2], "lint") == 0)
			cli_lint_usage(stdout);
		else if (argc > 2 && strcmp(argv[2], "tree") == 0)
			cli_tree_usage(stdout);
		else if (argc > 2 && strcmp(argv[2], "flatten") == 0)
			cli_flatten_usage(stdout);
		else
			usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("spfkit %s\n", SPFKIT_VERSION_STRING);
		return 0;
	}
	if (strcmp(argv[1], "check") == 0)
		return cli_check_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "lint") == 0)
		return cli_lint_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "tree") == 0)
		return cli_tree_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "flatten") == 0)
		return cli_flatten_main(argc - 1, argv + 1);
	cli_error(NULL, "unknown command '%.100s' (see spfkit --help)", argv[1]);
	return CLI_EXIT_USAGE;
}
