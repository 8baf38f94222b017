tree --zone tree.zone multi-below.example
