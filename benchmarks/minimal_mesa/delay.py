"""One trial of the continuous prisoner's dilemma with communication delay, in plain Mesa: two simplified players
(with probability p tit-for-tat, else defect with probability α·D), each choice reaching the server D ticks later,
Table 1's payoffs, and a DataCollector with the kit's nine model reporters (``coordkit.delay``)."""

import mesa

PAYOFF = {("C", "C"): 3.0, ("C", "D"): 0.0, ("D", "C"): 5.0, ("D", "D"): 1.0}


class Player(mesa.Agent):
    def __init__(self, model, delay):
        super().__init__(model)
        self.delay, self.choices, self.payoff = delay, [], 0.0

    def effective(self, tick):
        made = tick - self.delay
        return self.choices[made - 1] if made >= 1 else "?"

    def choose(self, opponent, p, alpha):
        follow, defect = self.model.rng.random(2)
        if follow < p:
            return "D" if opponent.effective(self.model.steps - 1) == "D" else "C"
        return "D" if defect < min(1.0, alpha * self.delay) else "C"


class Trial(mesa.Model):
    def __init__(self, delay=0, p=0.9, alpha=0.1, seconds=60, rng=None):
        super().__init__(rng=rng)
        self.p, self.alpha, self.ticks = p, alpha, seconds + delay
        self.a, self.b = Player(self, delay), Player(self, delay)
        last = lambda player: player.choices[-1] if player.choices else "?"  # noqa: E731
        self.datacollector = mesa.DataCollector(
            model_reporters={
                "tick": "steps",
                "time_s": lambda m: float(m.steps),
                "choice_a": lambda m: last(m.a),
                "choice_b": lambda m: last(m.b),
                "effective_a": lambda m: m.a.effective(m.steps),
                "effective_b": lambda m: m.b.effective(m.steps),
                "outcome": lambda m: m.a.effective(m.steps) + m.b.effective(m.steps),
                "payoff_a": lambda m: m.a.payoff,
                "payoff_b": lambda m: m.b.payoff,
            }
        )
        self.datacollector.collect(self)

    def step(self):
        choices = self.a.choose(self.b, self.p, self.alpha), self.b.choose(self.a, self.p, self.alpha)
        self.a.choices.append(choices[0])
        self.b.choices.append(choices[1])
        a, b = self.a.effective(self.steps), self.b.effective(self.steps)
        if "?" not in (a, b):
            self.a.payoff += PAYOFF[a, b]
            self.b.payoff += PAYOFF[b, a]
        self.datacollector.collect(self)
        self.running = self.steps < self.ticks


def one_trial(seed: int, delay: int = 0) -> Trial:
    trial = Trial(delay=delay, rng=seed)
    trial.run_model()
    return trial
