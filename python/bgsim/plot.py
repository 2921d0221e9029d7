"""The report's figures with matplotlib, in the report's colours (`Study.colors`)."""

import matplotlib.pyplot as plt

from .study import _number, unit

PAIRED_METRICS = ["background_energy_j", "latency_mean_s", "staleness_mean_s", "fresh_launches_pct", "completed_pct"]


def _scale(metric, values):
    """A divisor and unit for showing `metric` in one unit: seconds as min or h, joules as kJ."""
    u = unit(metric)
    top = max((abs(v) for v in values if v == v), default=0)
    if u == "s":
        return (3600, "h") if top >= 5400 else (60, "min") if top >= 90 else (1, "s")
    if u == "J" and top >= 10_000:
        return 1000, "kJ"
    if u == "%":
        return 1, "% points"
    return 1, u


def paired(study, metrics=None, baseline=None, axes=None):
    """Forest plots: each policy's difference from the baseline with its 95% interval, one
    panel per metric; an interval clear of the dashed zero line is a resolved difference."""
    metrics = metrics or PAIRED_METRICS
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    if axes is None:
        fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 0.45 * len(study.policies) + 1.6), squeeze=False)
        axes = axes[0]
    fig = axes[0].figure
    for ax, metric in zip(axes, metrics):
        table = study.paired(metric, baseline=baseline)
        divisor, label = _scale(metric, list(table["ci95_low"]) + list(table["ci95_high"]))
        for y, (policy, row) in enumerate(table.iloc[::-1].iterrows()):
            low, high, mean = row["ci95_low"] / divisor, row["ci95_high"] / divisor, row["difference_mean"] / divisor
            color = study.colors.get(policy, "#000000")
            if low == low:
                ax.plot([low, high], [y, y], color="#222222", linewidth=1.3)
            ax.plot([mean], [y], "o", color=color, markersize=8, markeredgecolor=color)
        ax.axvline(0, color="#333333", linestyle=(0, (3, 3)), linewidth=1)
        ax.set_yticks(range(len(table)))
        ax.set_yticklabels(list(table.index[::-1]))
        ax.set_xlabel(f"{metric} - {table['baseline'].iloc[0]} ({label})" if label else f"{metric} - baseline")
        ax.grid(axis="x", color="#eeeeee")
    axes[0].set_title(f"Against {study.paired(metrics[0], baseline=baseline)['baseline'].iloc[0]}, pair by pair", loc="left")
    fig.tight_layout()
    return fig


def paired_along(study, axis, metrics=None, baseline=None, axes=None):
    """A sweep's paired differences against one swept parameter: per policy a line at each
    value with its 95% band (`Study.paired(by=axis)`), one panel per metric, the dashed zero
    line where a band that leaves it is a difference the study resolves at that value."""
    metrics = metrics or PAIRED_METRICS
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    if axes is None:
        fig, axes = plt.subplots(1, len(metrics), figsize=(4.6 * len(metrics), 3.4), squeeze=False)
        axes = axes[0]
    fig = axes[0].figure
    name = study.axis_name(study.axis(axis))
    values = study.values(axis)
    numbers = [_number(v) for v in values]
    numeric = all(n is not None for n in numbers)
    xs = numbers if numeric else list(range(len(values)))
    for ax, metric in zip(axes, metrics):
        table = study.paired(metric, baseline=baseline, by=axis)
        divisor, label = _scale(metric, list(table["ci95_low"]) + list(table["ci95_high"]))
        for policy in dict.fromkeys(table.index.get_level_values("policy")):
            rows = table.loc[policy].reindex(values)
            color = study.colors.get(policy, "#000000")
            ax.fill_between(xs, rows["ci95_low"] / divisor, rows["ci95_high"] / divisor, color=color, alpha=0.15, linewidth=0)
            ax.plot(xs, rows["difference_mean"] / divisor, "o-", color=color, label=policy)
        ax.axhline(0, color="#333333", linestyle=(0, (3, 3)), linewidth=1)
        ax.set_xticks(xs)
        ax.set_xticklabels(values)
        ax.set_xlabel(name)
        ax.set_ylabel(f"{metric} - {table['baseline'].iloc[0]}" + (f" ({label})" if label else ""))
        ax.grid(color="#eeeeee")
    axes[0].legend(frameon=False)
    axes[0].set_title(f"Against {study.paired(metrics[0], baseline=baseline)['baseline'].iloc[0]}, along {name}", loc="left")
    fig.tight_layout()
    return fig


def means(study, metric="background_energy_j", ax=None):
    """Each policy's mean with its 95% interval, on an axis fitted to them (not from zero)."""
    table = study.interval(metric)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 0.45 * len(table) + 1.2))
    divisor, label = _scale(metric, list(table["mean"]))
    for y, (policy, row) in enumerate(table.iloc[::-1].iterrows()):
        color = study.colors.get(policy, "#000000")
        if row["ci95_low"] == row["ci95_low"]:
            ax.plot([row["ci95_low"] / divisor, row["ci95_high"] / divisor], [y, y], color="#222222", linewidth=1.3)
        ax.plot([row["mean"] / divisor], [y], "o", color=color, markersize=8)
    ax.set_yticks(range(len(table)))
    ax.set_yticklabels(list(table.index[::-1]))
    ax.set_xlabel(f"{metric} ({label})" if label else metric)
    ax.grid(axis="x", color="#eeeeee")
    return ax.figure


def per_app(study, column="runs_per_day", ax=None):
    """Each app's scheduled tasks: the median across replications (people) with the 10th-90th
    percentile range, one colour per policy."""
    table = study.per_app(column).reset_index()
    keys = list(dict.fromkeys(zip(table["app"], table["identifier"])))
    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 0.16 * len(keys) * len(study.policies) + 1.5))
    step = 0.8 / max(1, len(study.policies))
    for k, policy in enumerate(study.policies):
        rows = table[table["policy"] == policy]
        for _, row in rows.iterrows():
            y = keys.index((row["app"], row["identifier"])) + k * step
            color = study.colors.get(policy, "#000000")
            ax.plot([row["p10"], row["p90"]], [y, y], color=color, linewidth=1.5, alpha=0.7)
            ax.plot([row["median"]], [y], "o", color=color, markersize=5, label=policy if _ == rows.index[0] else None)
    ax.set_yticks([i + 0.4 - step / 2 for i in range(len(keys))])
    # "news: refresh" for com.example.news.refresh: the app, then the identifier's last part.
    ax.set_yticklabels([f"{app}: {identifier.rsplit('.', 1)[-1]}" for app, identifier in keys])
    ax.invert_yaxis()
    ax.set_xlabel(f"{column} ({unit(column)}), median and p10-p90")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(axis="x", color="#eeeeee")
    ax.figure.tight_layout()
    return ax.figure


def people(study, metric="staleness_mean_s", against_baseline=False, ax=None):
    """Each policy's per-person values as an empirical CDF (a fleet's spread across people);
    a log axis only when the values span more than a decade. With `against_baseline`, each
    person's change from the baseline in percent instead, for metrics where people differ far
    more than policies do (background energy), whose own CDFs lie on one another."""
    wide = study.per_person(metric)
    policies = [p for p in study.policies if p in wide]
    if against_baseline:
        base = wide[study.baseline]
        wide = wide[policies].sub(base, axis=0).div(base.where(base != 0), axis=0) * 100
        policies = [p for p in policies if p != study.baseline]
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 4))
    values = [v for p in policies for v in wide[p].dropna()]
    divisor, label = (1, f"% change from {study.baseline}") if against_baseline else _scale(metric, values)
    for policy in policies:
        xs = sorted(wide[policy].dropna() / divisor)
        ax.step(xs, [(i + 1) / len(xs) for i in range(len(xs))], where="post", color=study.colors.get(policy), label=policy)
    positive = [v for v in values if v > 0]
    if against_baseline:
        ax.axvline(0, color="#333333", linestyle=(0, (3, 3)), linewidth=1)
    elif positive and len(positive) == len(values) and max(positive) > 10 * min(positive):
        ax.set_xscale("log")
    ax.set_xlabel(f"{metric} ({label})" if label else metric)
    ax.set_ylabel("share of people")
    ax.legend(fontsize=8)
    ax.grid(color="#eeeeee")
    return ax.figure
