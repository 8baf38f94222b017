tree --zone tree.zone multi.example --dot
