check --dns 127.0.0.1:$PORT --receiver mx.example.org --trace --ip 192.0.2.10 --sender mallory@flaky.example --helo mail.example
