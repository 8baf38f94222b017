tree --zone tree.zone norecord.example
