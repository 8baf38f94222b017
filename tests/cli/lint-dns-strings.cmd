lint --dns 127.0.0.1:$PORT split.example
