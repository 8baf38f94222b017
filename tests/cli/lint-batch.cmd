lint --zone ../../data/demo.zone --batch -
