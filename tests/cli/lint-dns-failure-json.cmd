lint --dns 127.0.0.1:$PORT flaky.example --json
