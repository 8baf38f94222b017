check --zone cli.zone --receiver mx.example.org --json --ip 192.0.2.10 --sender "$(printf 'a\377\001"b@mx-only.example')" --helo "$(printf 'x\r\ny')"
