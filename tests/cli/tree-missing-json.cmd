tree --zone tree.zone missing.example --json
