"""Mesa's floor for a model of ``agents`` agents run for ``steps`` steps with ``model_reporters`` and
``agent_reporters`` attribute reporters, whose step does nothing: the least a plain-Mesa model of that size costs."""

import mesa


class Idle(mesa.Agent):
    def __init__(self, model, reporters):
        super().__init__(model)
        for name in reporters:
            setattr(self, name, 0.0)


class Floor(mesa.Model):
    def __init__(self, agents: int, steps: int, model_reporters: int, agent_reporters: int, rng=None):
        super().__init__(rng=rng)
        self.last_step = steps
        model_names = [f"m{k}" for k in range(model_reporters)]
        agent_names = [f"a{k}" for k in range(agent_reporters)]
        for name in model_names:
            setattr(self, name, 0.0)
        for _ in range(agents):
            Idle(self, agent_names)
        self.datacollector = mesa.DataCollector(
            model_reporters={name: name for name in model_names}, agent_reporters={name: name for name in agent_names}
        )
        self.datacollector.collect(self)

    def step(self):
        self.datacollector.collect(self)
        self.running = self.steps < self.last_step


def one_run(agents: int, steps: int, model_reporters: int, agent_reporters: int, seed: int = 0) -> Floor:
    model = Floor(agents, steps, model_reporters, agent_reporters, rng=seed)
    model.run_model()
    return model
