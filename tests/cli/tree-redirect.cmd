tree --zone tree.zone redirected.example
