lint --zone ../../data/demo.zone classic.example.com
