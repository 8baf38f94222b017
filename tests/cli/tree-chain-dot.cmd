tree --zone tree.zone chain.example --dot
