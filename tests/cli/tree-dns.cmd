tree --dns 127.0.0.1:$PORT chain.example
