tree --zone tree.zone
