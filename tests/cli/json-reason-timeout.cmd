check --dns 127.0.0.1:$PORT --receiver mx.example.org --timeout 200 --tries 1 --ip 192.0.2.10 --json --sender judy@slow.example --helo mail.example
