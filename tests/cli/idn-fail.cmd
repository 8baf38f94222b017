check --zone idn.zone --receiver mx.example.org --ip 192.0.2.9 --sender 'user@MÜNCHEN.example' --helo h.example
