"""Services: the policies over the stores (what a new observation means for the facts held), below the pipelines."""
