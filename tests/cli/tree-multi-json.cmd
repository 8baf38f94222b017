tree --zone tree.zone multi.example --json
