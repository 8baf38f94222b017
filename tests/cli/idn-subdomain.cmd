check --zone idn.zone --receiver mx.example.org --ip 192.0.2.7 --sender 'a@mail.bücher.example' --helo h.example
