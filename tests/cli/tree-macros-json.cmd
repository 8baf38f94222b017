tree --zone tree.zone macros.example --json
