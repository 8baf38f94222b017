check --dns 127.0.0.1:$PORT --receiver mx.example.org --ip 2001:db8:100::25 --sender dave@shop.example --helo mail.example
