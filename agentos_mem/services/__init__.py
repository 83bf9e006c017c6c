"""Services, below the pipelines: the policies over the stores (``supersession``: what a new observation means for
the facts held) and a person's decisions about their facts (``decisions``: forget a fact, settle a conflict), the
functions every transport and the journal's replay call."""
