lint --zone ../../data/demo.zone loop.example.com --json
