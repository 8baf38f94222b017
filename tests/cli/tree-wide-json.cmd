tree --zone tree.zone wide.example --json
