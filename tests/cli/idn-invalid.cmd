check --zone idn.zone --receiver mx.example.org --ip 192.0.2.1 --sender "user@$(printf '\342\235\244').example" --helo h.example --trace
