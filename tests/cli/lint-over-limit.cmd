lint --zone lint-owner.zone own.example
