tree --zone tree.zone hostile.example --dot
