check --zone ../../data/demo.zone --receiver mx.receiver.example --ip 192.0.2.1 --sender ivan@twice.example.org --helo mail.example.org
