tree --zone tree.zone loop-a.example --json
