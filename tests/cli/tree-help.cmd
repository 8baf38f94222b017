tree --help
