lint --zone ../../data/demo.zone --json classic.example.com
