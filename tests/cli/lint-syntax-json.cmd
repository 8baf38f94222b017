lint --zone ../../data/demo.zone broken.example.org --json
