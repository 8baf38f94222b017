check --zone ../../data/demo.zone --receiver mx.receiver.example --trace --ip 192.0.2.99 --sender frank@lab.example.net --helo mail.lab.example.net
