check --dns 127.0.0.1:$PORT --receiver mx.example.org --no-lookahead --trace --ip 192.0.2.11 --sender alice@mx-only.example --helo mail.example
