tree --zone no-such.zone chain.example
