check --dns 'not an address' --ip 192.0.2.10 --sender a@mx-only.example --helo mail.example
