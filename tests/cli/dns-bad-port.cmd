check --dns 127.0.0.1:99999 --ip 192.0.2.10 --sender a@mx-only.example --helo mail.example
