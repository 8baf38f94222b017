lint --zone lint-owner.zone multi.example
