tree --zone tree.zone chain.example --json --dot
