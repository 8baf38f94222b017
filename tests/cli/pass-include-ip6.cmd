check --zone cli.zone --receiver mx.example.org --ip 2001:db8:100::25 --sender dave@shop.example --helo mail.example
