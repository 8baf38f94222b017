tree --zone tree.zone v6mix.example
