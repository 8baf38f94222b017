lint --zone lint-owner.zone shop.example
