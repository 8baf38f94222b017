check --zone ../../data/demo.zone --receiver mx.receiver.example --ip 192.0.2.10 --sender judy@loop.example.com --helo mx1.example.com
