lint --zone ../../data/demo.zone --batch - example.com
