/* toolrun dashboard: the page's script. No build step, no inline script (the CSP forbids it);
 * every value from the server is set with textContent, never as HTML. Charts are uPlot's. */
/* global document, window, location, history, sessionStorage, fetch, URLSearchParams, uPlot, setTimeout, clearTimeout */
(function () {
  'use strict';

  var TOKEN_KEY = 'toolrun-dashboard-token';
  var session = null;
  var pollTimer = null;

  // ── token: taken from the #token=… fragment once, kept in sessionStorage, stripped from the URL
  (function takeToken() {
    var match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
    if (match) {
      sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
      history.replaceState(null, '', location.pathname + location.search + '#/overview');
    }
  })();

  function token() {
    return sessionStorage.getItem(TOKEN_KEY) || '';
  }

  // ── DOM helpers
  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (name) {
        var value = attrs[name];
        if (value === undefined || value === null || value === false) return;
        if (name === 'text') node.textContent = String(value);
        else if (name === 'className') node.className = value;
        else if (name.slice(0, 2) === 'on') node.addEventListener(name.slice(2), value);
        else node.setAttribute(name, value === true ? '' : String(value));
      });
    }
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }
  function append(node, child) {
    if (child === undefined || child === null || child === false) return;
    if (Array.isArray(child))
      child.forEach(function (item) {
        append(node, item);
      });
    else if (typeof child === 'object' && child.nodeType) node.appendChild(child);
    else node.appendChild(document.createTextNode(String(child)));
  }
  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }
  function setStatus(text, isError) {
    var status = document.getElementById('status');
    status.textContent = text || '';
    status.className = isError ? 'status error' : 'status';
  }

  // ── formatting
  function num(value) {
    return value === null || value === undefined ? '–' : Number(value).toLocaleString('en-US');
  }
  // Two units, the smaller one rounded first (so 6 d 23.6 h is 7 d 0 h, never 6 d 24 h).
  function duration(ms) {
    if (ms === null || ms === undefined) return '–';
    var sign = ms < 0 ? '−' : '';
    var abs = Math.abs(ms);
    if (abs < 1000) return sign + Math.round(abs) + ' ms';
    if (abs < 60000) return sign + (abs / 1000).toFixed(1) + ' s';
    var seconds = Math.round(abs / 1000);
    if (seconds < 3600) return sign + Math.floor(seconds / 60) + ' min ' + (seconds % 60) + ' s';
    var minutes = Math.round(abs / 60000);
    if (minutes < 48 * 60) return sign + Math.floor(minutes / 60) + ' h ' + (minutes % 60) + ' min';
    var hours = Math.round(abs / 3600000);
    return sign + Math.floor(hours / 24) + ' d ' + (hours % 24) + ' h';
  }
  // "1 entry", "2 entries": a count with its noun.
  function plural(count, noun) {
    var many = /y$/.test(noun) ? noun.replace(/y$/, 'ies') : noun + 's';
    return num(count) + ' ' + (Number(count) === 1 ? noun : many);
  }
  function bytes(value) {
    if (value === null || value === undefined) return 'unknown';
    if (value < 1024) return value + ' B';
    if (value < 1048576) return (value / 1024).toFixed(1) + ' KiB';
    return (value / 1048576).toFixed(1) + ' MiB';
  }
  function counts(record) {
    var keys = Object.keys(record || {});
    if (keys.length === 0) return 'none';
    return keys
      .map(function (key) {
        return key + ' ' + record[key];
      })
      .join(', ');
  }
  function json(value) {
    return JSON.stringify(value, null, 2);
  }

  // ── API
  function api(path, options) {
    options = options || {};
    var headers = { accept: 'application/json' };
    if (token()) headers.authorization = 'Bearer ' + token();
    var init = { method: options.method || 'GET', headers: headers, credentials: 'same-origin' };
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(options.body);
    }
    return fetch(path, init).then(function (response) {
      return response.json().then(function (body) {
        if (!response.ok) {
          var error = new Error((body && body.error && body.error.message) || 'HTTP ' + response.status);
          error.code = body && body.error && body.error.code;
          error.status = response.status;
          throw error;
        }
        return body;
      });
    });
  }

  // ── the view's reads: each route() starts a new view, and an answer to a read asked for an earlier
  // one is never shown (nor its error): a slow overview must not replace the list the user went to
  var viewNumber = 0;
  function viewRead(path) {
    var askedFor = viewNumber;
    var never = new Promise(function () {});
    return api(path).then(
      function (body) {
        return askedFor === viewNumber ? body : never;
      },
      function (error) {
        if (askedFor === viewNumber) throw error;
        return never;
      },
    );
  }

  function query(params) {
    var search = new URLSearchParams();
    Object.keys(params).forEach(function (key) {
      if (params[key] !== undefined && params[key] !== null && params[key] !== '') search.set(key, params[key]);
    });
    var text = search.toString();
    return text ? '?' + text : '';
  }

  // ── charts (uPlot)
  function sparkline(label, times, values, color) {
    var figure = el('figure', { role: 'img', 'aria-label': label + ': ' + (values.length ? 'latest ' + values[values.length - 1] : 'no samples yet') });
    var holder = el('div', { className: 'chart-holder' });
    figure.appendChild(holder);
    figure.appendChild(el('figcaption', { text: label }));
    if (typeof uPlot === 'function' && times.length > 0) {
      window.requestAnimationFrame(function () {
        new uPlot(
          {
            width: 220,
            height: 60,
            legend: { show: false },
            cursor: { show: false },
            scales: { x: { time: true } },
            axes: [{ show: false }, { show: false }],
            series: [{}, { stroke: color, width: 2, fill: color + '22' }],
          },
          [times, values],
          holder,
        );
      });
    }
    return figure;
  }

  var PALETTE = ['#0b5cad', '#a4141d', '#17662b', '#7a3e9d', '#9a6b00', '#00707a', '#5b5b5b', '#c2410c', '#1f2937'];

  function lineChart(label, buckets, seriesByName, width) {
    var names = Object.keys(seriesByName);
    var figure = el('figure', { className: 'chart', role: 'img', 'aria-label': label + ' (' + names.join(', ') + ')' });
    var holder = el('div');
    figure.appendChild(el('figcaption', { text: label }));
    figure.appendChild(holder);
    if (typeof uPlot === 'function' && buckets.length > 0 && names.length > 0) {
      window.requestAnimationFrame(function () {
        new uPlot(
          {
            width: width || 560,
            height: 220,
            scales: { x: { time: true } },
            series: [{}].concat(
              names.map(function (name, index) {
                return { label: name, stroke: PALETTE[index % PALETTE.length], width: 2 };
              }),
            ),
          },
          [
            buckets.map(function (ms) {
              return ms / 1000;
            }),
          ].concat(
            names.map(function (name) {
              return seriesByName[name];
            }),
          ),
          holder,
        );
      });
    } else figure.appendChild(el('p', { className: 'muted', text: 'no data' }));
    return figure;
  }

  function table(caption, headers, rows, options) {
    options = options || {};
    var head = el(
      'tr',
      null,
      headers.map(function (header) {
        var text = typeof header === 'string' ? header : header.text;
        return el('th', { scope: 'col', className: header.num ? 'num' : null, text: text });
      }),
    );
    var body = rows.map(function (cells) {
      return el(
        'tr',
        options.rowAttrs ? options.rowAttrs(cells) : null,
        cells.map(function (cell, index) {
          var header = headers[index];
          var className = header && header.num ? 'num' : null;
          if (cell && typeof cell === 'object' && cell.nodeType) return el('td', { className: className }, cell);
          return el('td', { className: className, text: cell === undefined || cell === null ? '–' : cell });
        }),
      );
    });
    return el('table', { 'data-testid': options.testid }, el('caption', { text: caption }), el('thead', null, head), el('tbody', null, body));
  }

  // ── overview
  function queueCard(name, metrics, samples, bounds, extra) {
    var times = samples.map(function (sample) {
      return sample.at / 1000;
    });
    var depths = samples.map(function (sample) {
      return sample[name].depth;
    });
    var ages = samples.map(function (sample) {
      return sample[name].oldestAgeMs === null ? 0 : sample[name].oldestAgeMs / 1000;
    });
    var title = name === 'tool' ? 'Tool DLQ' : 'Message DLQ';
    return el(
      'section',
      { className: 'card', 'aria-labelledby': name + '-dlq-title', 'data-testid': name + '-card' },
      el('h2', { id: name + '-dlq-title' }, el('a', { href: '#/' + name, text: title })),
      el(
        'dl',
        { className: 'facts' },
        el('dt', { text: 'Depth' }),
        el(
          'dd',
          null,
          el('span', { className: 'big', 'data-testid': name + '-depth', text: String(metrics.depth) }),
          metrics.depth === 1 ? ' entry' : ' entries',
        ),
        el('dt', { text: 'Oldest entry' }),
        el('dd', { 'data-testid': name + '-oldest' }, metrics.oldestAt ? duration(metrics.oldestAgeMs) + ' old (' + metrics.oldestAt + ')' : 'empty'),
        el('dt', { text: 'Stored' }),
        el('dd', { 'data-testid': name + '-bytes', 'data-bytes': metrics.bytes === null ? '' : String(metrics.bytes) }, bytes(metrics.bytes)),
        el('dt', { text: 'Bound' }),
        el('dd', { 'data-testid': name + '-bound' }, plural(bounds.maxEntries, 'entry') + ' · ' + bytes(bounds.maxBytes) + ' (' + bounds.source + ')'),
        extra,
      ),
      el('div', { className: 'spark' }, [
        sparkline(title + ' depth over time', times, depths, '#0b5cad'),
        sparkline(title + ' oldest entry age (s) over time', times, ages, '#a4141d'),
      ]),
    );
  }

  function renderOverview(view, data) {
    var metrics = data.deadLetters;
    var tool = metrics.tool;
    var message = metrics.message;
    var toolExtra = [
      el('dt', { text: 'By kind' }),
      el('dd', { 'data-testid': 'tool-kinds' }, counts(tool.entriesByKind)),
      el('dt', { text: 'By tool' }),
      el('dd', { 'data-testid': 'tool-by-tool' }, counts(tool.entriesByTool)),
      el('dt', { text: 'By model' }),
      el('dd', null, counts(tool.entriesByModel)),
    ];
    var messageExtra = [el('dt', { text: 'By reason' }), el('dd', { 'data-testid': 'message-by-reason' }, counts(message.entriesByReason))];
    var alerts = data.alerts.length
      ? el(
          'ul',
          { className: 'alerts', role: 'alert', 'data-testid': 'alerts' },
          data.alerts.map(function (alert) {
            return el('li', null, alert.type + ': ' + alert.text);
          }),
        )
      : el('p', { className: 'ok-note', 'data-testid': 'alerts' }, 'No alerts: both DLQs are under their bounds and no shared breaker is open.');
    var breakers = data.breakers.length
      ? table(
          'Shared breakers',
          ['Key', 'State', { text: 'Openings', num: true }, { text: 'Consecutive failures', num: true }, 'Opened at', 'Last error'],
          data.breakers.map(function (breaker) {
            return [
              breaker.key,
              el('span', { className: 'state-' + breaker.state, text: breaker.state }),
              breaker.openings,
              breaker.consecutiveFailures,
              breaker.openedAt ? new Date(breaker.openedAt).toISOString() : '–',
              breaker.lastError || '–',
            ];
          }),
          { testid: 'breakers' },
        )
      : el('p', { className: 'muted', 'data-testid': 'breakers' }, 'No shared breaker has a record yet.');

    var failures = data.failures;
    var failureSection;
    if (!failures.available) failureSection = el('p', { className: 'muted' }, failures.note);
    else {
      var report = failures.report;
      var series = failures.series;
      failureSection = el(
        'div',
        null,
        el(
          'p',
          null,
          num(report.totals.failures) +
            ' failed calls in ' +
            num(report.totals.runsWithFailures) +
            ' runs, ' +
            num(report.totals.recoveries) +
            ' recoveries, ' +
            num(report.totals.breakerTrips) +
            ' breaker trips, from ' +
            (report.from || '–') +
            ' to ' +
            (report.to || '–') +
            '.',
        ),
        table(
          'Failure-type mix',
          ['Type', { text: 'Failed calls', num: true }, { text: 'Share', num: true }],
          report.types.map(function (type) {
            return [type.type, type.count, (type.share * 100).toFixed(1) + ' %'];
          }),
          { testid: 'failure-types' },
        ),
        el('div', { className: 'grid2' }, [
          lineChart('Failed calls per ' + duration(series.bucketMs) + ', by type', series.buckets, series.byType),
          lineChart('Failed calls per ' + duration(series.bucketMs) + ', by tool (rate over time)', series.buckets, series.byTool),
        ]),
        report.fields.length === 0
          ? el(
              'p',
              { className: 'muted', 'data-testid': 'fields' },
              'Fields that fail most: none — no failed call named an argument field (the failures were the environment, permissions or the tools themselves).',
            )
          : table(
              'Fields that fail most, with the suggested fix',
              ['Tool', 'Field', { text: 'Failures', num: true }, { text: 'Share of the tool', num: true }, 'Problems', 'Suggested fix'],
              report.fields.slice(0, 10).map(function (field) {
                return [
                  field.toolName,
                  field.path,
                  field.failures,
                  (field.shareOfTool * 100).toFixed(0) + ' %',
                  field.problems
                    .map(function (p) {
                      return p.problem + ' ' + p.count;
                    })
                    .join(', '),
                  field.hint,
                ];
              }),
              { testid: 'fields' },
            ),
      );
    }
    var groups = data.groups;
    clear(view);
    append(view, [
      el('h2', { className: 'visually-hidden', text: 'Overview' }),
      alerts,
      el('div', { className: 'grid2' }, [
        queueCard('message', message, data.samples, data.bounds, messageExtra),
        queueCard('tool', tool, data.samples, data.bounds, toolExtra),
      ]),
      el(
        'p',
        { className: 'muted', 'data-testid': 'queue-size' },
        'Run queue: ' +
          num(data.queue.size) +
          ' messages waiting or in flight · runs: ' +
          (data.runs ? counts(data.runs) : 'not countable on this backend') +
          ' · measured ' +
          metrics.measuredAt,
      ),
      el('section', { className: 'card', 'aria-labelledby': 'groups-title' }, el('h2', { id: 'groups-title', text: 'Entries by cause' }), groupTables(groups)),
      el('section', { className: 'card', 'aria-labelledby': 'breakers-title' }, el('h2', { id: 'breakers-title', text: 'Breakers' }), breakers),
      el(
        'section',
        { className: 'card', 'aria-labelledby': 'failures-title' },
        el('h2', { id: 'failures-title', text: 'Failures (failure log)' }),
        failureSection,
      ),
    ]);
  }

  function groupTables(groups) {
    return el('div', { className: 'grid2' }, [
      table(
        'Tool DLQ (reason · last error · tool)',
        ['Cause', { text: 'Entries', num: true }, { text: 'Tokens spent (in/out)', num: true }],
        groups.tool.map(function (group) {
          return [
            el('a', { href: '#/tool' + query({ group: group.group }), text: group.group }),
            group.count,
            num(group.tokens.input) + ' / ' + num(group.tokens.output),
          ];
        }),
        { testid: 'tool-groups' },
      ),
      table(
        'Message DLQ (code · field)',
        ['Cause', { text: 'Entries', num: true }],
        groups.message.map(function (group) {
          return [el('a', { href: '#/message' + query({ group: group.group }), text: group.group }), group.count];
        }),
        { testid: 'message-groups' },
      ),
    ]);
  }

  // ── tool DLQ list
  function labelled(text, control) {
    return el('label', null, text, control);
  }

  function renderToolList(view, params) {
    var limit = Number(params.get('limit') || 50);
    var offset = Number(params.get('offset') || 0);
    var filter = {
      group: params.get('group') || '',
      tool: params.get('tool') || '',
      reason: params.get('reason') || '',
      kind: params.get('kind') || '',
      text: params.get('text') || '',
    };
    clear(view);
    var heading = el('h2', { text: 'Tool DLQ' });
    var groupSelect = el('select', { name: 'group', id: 'filter-group' }, el('option', { value: '', text: 'any cause' }));
    var form = el(
      'form',
      { className: 'filters', role: 'search', 'aria-label': 'Filter the tool DLQ' },
      labelled('Cause', groupSelect),
      labelled('Tool', el('input', { name: 'tool', value: filter.tool, id: 'filter-tool' })),
      labelled('Reason', el('input', { name: 'reason', value: filter.reason, id: 'filter-reason' })),
      labelled(
        'Kind',
        el(
          'select',
          { name: 'kind', id: 'filter-kind' },
          ['', 'tool', 'model', 'run'].map(function (kind) {
            return el('option', { value: kind, selected: kind === filter.kind, text: kind || 'any kind' });
          }),
        ),
      ),
      labelled('Text (run id, error)', el('input', { name: 'text', value: filter.text, id: 'filter-text', type: 'search' })),
      el('button', { type: 'submit', text: 'Apply filter' }),
      el('a', { href: '#/tool', text: 'Clear' }),
    );
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var data = new window.FormData(form);
      var next = {};
      data.forEach(function (value, key) {
        next[key] = value;
      });
      location.hash = '#/tool' + query(next);
    });
    var listHolder = el('div', { 'data-testid': 'tool-list' }, el('p', { text: 'Loading…' }));
    var actions = toolActions(filter);
    append(view, [heading, form, actions, listHolder]);
    view.focus();

    viewRead('/api/tool/entries' + query(Object.assign({ limit: limit, offset: offset }, filter))).then(function (page) {
      clear(listHolder);
      var rows = page.rows.map(function (row) {
        return [
          el('a', { href: '#/tool/' + encodeURIComponent(row.id), text: row.id, 'aria-label': 'entry ' + row.id + ' (run ' + row.runId + ')' }),
          row.runId,
          row.step.index === null ? '–' : 'step ' + row.step.index + ' of max ' + row.step.of,
          row.tool,
          [row.type, row.code].filter(Boolean).join(' / ') || '–',
          row.kind === 'run' ? (row.deliveries === null ? '–' : row.deliveries + ' deliveries') : row.attempts,
          row.firstSeenAt + ' (' + duration(row.ageMs) + ' ago)',
          num(row.tokens.input) + ' / ' + num(row.tokens.output),
          row.expiry === 'gone' ? 'expired' : (row.expiry === 'estimated' ? '≈ ' : '') + duration(row.expiresInMs),
          row.cause,
        ];
      });
      var end = page.offset + page.rows.length;
      var summary =
        page.rows.length === 0
          ? 'No entry matches.'
          : 'Entries ' + (page.offset + 1) + '–' + end + ' of ' + (page.totalExact ? num(page.total) : 'at least ' + num(page.total));
      append(listHolder, [
        el('p', { 'data-testid': 'list-summary', role: 'status', text: summary }),
        table(
          'Tool-DLQ entries, oldest first',
          [
            'Entry',
            'Run',
            'Failed step',
            'Tool',
            'Type / code',
            { text: 'Attempts', num: true },
            'First seen',
            { text: 'Tokens (in/out)', num: true },
            'Conversation expires in',
            'Cause',
          ],
          rows,
          {
            testid: 'tool-entries',
          },
        ),
        pager('#/tool', params, page),
      ]);
      // the cause groups need a scan of the queue: asked for once the rows are on the page
      viewRead('/api/tool/groups').then(function (groups) {
        groups.tool.forEach(function (group) {
          groupSelect.appendChild(el('option', { value: group.group, selected: group.group === filter.group, text: group.group + ' (' + group.count + ')' }));
        });
        if (
          filter.group &&
          !groups.tool.some(function (group) {
            return group.group === filter.group;
          })
        ) {
          groupSelect.appendChild(el('option', { value: filter.group, selected: true, text: filter.group + ' (0)' }));
        }
      });
    }, showError);
  }

  function pager(base, params, page) {
    var limit = page.limit;
    var prev = Math.max(0, page.offset - limit);
    var make = function (offset) {
      var next = {};
      params.forEach(function (value, key) {
        next[key] = value;
      });
      next.offset = offset;
      return base + query(next);
    };
    return el(
      'nav',
      { className: 'pager', 'aria-label': 'Pages' },
      page.offset > 0 ? el('a', { href: make(prev), text: '← Previous page' }) : el('span', { className: 'muted', text: '← Previous page' }),
      page.hasMore
        ? el('a', { href: make(page.offset + limit), text: 'Next page →', 'data-testid': 'next-page' })
        : el('span', { className: 'muted', text: 'Next page →' }),
    );
  }

  function canAct() {
    return session && !session.readOnly;
  }

  function toolActions(filter) {
    var filtering = Object.keys(filter).some(function (key) {
      return filter[key];
    });
    var outcome = el('div', { 'data-testid': 'bulk-outcome', 'aria-live': 'polite' });
    var concurrency = el('input', { name: 'concurrency', id: 'bulk-concurrency', type: 'number', min: '1', max: '100', value: '1' });
    var rate = el('input', { name: 'ratePerSecond', id: 'bulk-rate', type: 'number', min: '0.1', step: '0.1', value: '', placeholder: 'no limit' });
    var run = el('button', { type: 'button', disabled: true, text: filtering ? 'Replay the matching entries' : 'Drain the tool DLQ' });
    var dry = el('button', { type: 'button', className: 'secondary', text: 'Dry run: estimate' });
    var estimate = null;
    dry.addEventListener('click', function () {
      api('/api/tool/replays', { method: 'POST', body: { filter: filter, dryRun: true } }).then(function (result) {
        estimate = result;
        clear(outcome);
        append(
          outcome,
          el(
            'p',
            { className: 'outcome', 'data-testid': 'estimate' },
            'Dry run: ' +
              plural(result.entries, 'entry') +
              ' (' +
              counts(result.byKind) +
              ') × tokens: ' +
              num(result.tokensSpent.input) +
              ' input / ' +
              num(result.tokensSpent.output) +
              ' output spent so far; a replay needs at least ' +
              num(result.estimatedModelCalls) +
              ' model calls ≈ ' +
              num(result.estimatedInputTokens) +
              ' input tokens.',
          ),
        );
        run.disabled = result.entries === 0 || !(session && session.canReplay);
      }, showError);
    });
    run.addEventListener('click', function () {
      if (!estimate) return;
      run.disabled = true;
      api('/api/tool/replays', {
        method: 'POST',
        body: { filter: filter, concurrency: Number(concurrency.value || 1), ratePerSecond: rate.value === '' ? null : Number(rate.value) },
      }).then(
        function (job) {
          location.hash = '#/jobs/' + job.id;
        },
        function (error) {
          run.disabled = false;
          showError(error);
        },
      );
    });
    var purgeInput = el('input', { name: 'confirm', id: 'purge-tool-confirm', autocomplete: 'off', 'aria-describedby': 'purge-tool-help' });
    var purge = el('button', { type: 'submit', className: 'danger', text: 'Purge the tool DLQ' });
    var purgeForm = el(
      'form',
      { className: 'actions', 'aria-label': 'Purge the tool DLQ' },
      labelled('Type “purge tool” to confirm', purgeInput),
      purge,
      el('span', { id: 'purge-tool-help', className: 'muted', text: 'deletes every entry for good; the runs are not resumed' }),
    );
    purgeForm.addEventListener('submit', function (event) {
      event.preventDefault();
      api('/api/tool/purge', { method: 'POST', body: { confirm: purgeInput.value } }).then(function (result) {
        setStatus('Purged ' + plural(result.purged, 'entry') + ' from the tool DLQ.');
        route();
      }, showError);
    });
    if (!canAct()) return el('p', { className: 'muted', text: 'Read-only: actions are refused by this dashboard.' });
    return el(
      'section',
      { className: 'card', 'aria-labelledby': 'bulk-title' },
      el('h3', { id: 'bulk-title', text: filtering ? 'Bulk replay of the matching entries' : 'Drain (every entry)' }),
      el(
        'form',
        {
          className: 'actions',
          'aria-label': 'Bulk replay',
          onsubmit: function (event) {
            event.preventDefault();
          },
        },
        labelled('Replays at once', concurrency),
        labelled('At most per second', rate),
        dry,
        run,
      ),
      session && !session.canReplay ? el('p', { className: 'muted', text: 'No config was given (--config FILE): this dashboard cannot replay.' }) : null,
      outcome,
      purgeForm,
    );
  }

  // ── tool DLQ entry
  // The failed call of an entry's conversation: the highlighted tool call, with its arguments.
  function failedCallOf(detail) {
    var found = null;
    detail.conversation.messages.forEach(function (message) {
      (message.toolCalls || []).forEach(function (call) {
        if (call.highlighted) found = call;
      });
    });
    return found;
  }

  function conversationList(detail) {
    return el(
      'ol',
      { className: 'conversation', 'data-testid': 'conversation' },
      detail.conversation.messages.map(function (message) {
        return el(
          'li',
          { className: message.highlighted ? 'failed' : null, 'data-failed': message.highlighted ? 'true' : null },
          el('span', { className: 'badge', text: message.role }),
          message.step !== null ? el('span', { className: 'badge', text: 'step ' + message.step }) : null,
          message.highlighted ? el('span', { className: 'badge bad', text: message.role === 'tool' ? 'failed call result' : 'failed call' }) : null,
          message.name ? el('span', { className: 'badge', text: message.name }) : null,
          message.content !== null ? el('pre', { text: message.content }) : null,
          (message.toolCalls || []).map(function (call) {
            return el('pre', {
              className: call.highlighted ? 'failed-call' : null,
              text:
                (call.highlighted ? '▶ ' : '') + call.name + '(' + (typeof call.args === 'string' ? call.args : JSON.stringify(call.args)) + ')  id ' + call.id,
            });
          }),
        );
      }),
    );
  }

  // What failed, first: the call (tool and arguments), what the model was told, and why.
  function failedCallSection(detail) {
    var row = detail.row;
    var call = failedCallOf(detail);
    var error = detail.envelope && detail.envelope.parsed && detail.envelope.parsed.error ? detail.envelope.parsed.error : null;
    var args = call ? (typeof call.args === 'string' ? call.args : json(call.args)) : null;
    return el(
      'section',
      { className: 'card failed-call-card', 'aria-labelledby': 'failed-call-title', 'data-testid': 'failed-call' },
      el('h3', {
        id: 'failed-call-title',
        text: detail.kind === 'tool' ? 'The failed call' : detail.kind === 'model' ? 'The failed model call' : 'The failed run',
      }),
      el(
        'dl',
        { className: 'facts' },
        el('dt', { text: detail.kind === 'model' ? 'Model' : 'Tool' }),
        el('dd', { 'data-testid': 'failed-call-tool', text: row.tool }),
        args !== null ? [el('dt', { text: 'Arguments' }), el('dd', null, el('pre', { 'data-testid': 'failed-call-args', text: args }))] : null,
        el('dt', { text: 'Type / code' }),
        el('dd', { 'data-testid': 'failed-call-code', text: [row.type, row.code].filter(Boolean).join(' / ') || 'unknown' }),
        el('dt', { text: 'Last error' }),
        el('dd', { text: row.lastError || '–' }),
        error && error.suggestion ? [el('dt', { text: 'The model was told' }), el('dd', { text: error.suggestion })] : null,
        el('dt', { text: 'Step' }),
        el('dd', { text: row.step.index === null ? '–' : 'step ' + row.step.index + ' (0-based, as the CLI prints it) of max ' + row.step.of }),
      ),
    );
  }

  // Replay one entry, after a confirmation that says what it does and what it costs.
  function replaySection(detail, id) {
    var estimate = detail.estimate;
    var outcome = el('div', { 'data-testid': 'replay-outcome', 'aria-live': 'polite' });
    var canReplay = !!(session && session.canReplay);
    var replay = el('button', { type: 'button', 'data-testid': 'replay-one', text: 'Replay this entry…', disabled: !canReplay });
    var confirm = el('button', { type: 'button', 'data-testid': 'replay-confirm', text: 'Confirm the replay' });
    var cancel = el('button', { type: 'button', className: 'secondary', text: 'Cancel' });
    var cost =
      'Cost: at least ' +
      plural(estimate.estimatedModelCalls, 'model call') +
      ' ≈ ' +
      num(estimate.estimatedInputTokens) +
      ' input tokens; the run has spent ' +
      num(estimate.tokensSpent.input) +
      ' input / ' +
      num(estimate.tokensSpent.output) +
      ' output tokens so far.';
    var confirmation = el(
      'div',
      { className: 'confirm', 'data-testid': 'replay-confirmation', hidden: true },
      el('p', { 'data-testid': 'replay-cost', text: cost }),
      confirm,
      cancel,
    );
    replay.addEventListener('click', function () {
      confirmation.hidden = false;
      replay.disabled = true;
      confirm.focus();
    });
    cancel.addEventListener('click', function () {
      confirmation.hidden = true;
      replay.disabled = !canReplay;
    });
    confirm.addEventListener('click', function () {
      confirm.disabled = true;
      cancel.disabled = true;
      setStatus('Replaying ' + id + '…');
      api('/api/tool/entries/' + encodeURIComponent(id) + '/replay', { method: 'POST', body: {} }).then(
        function (job) {
          var entry = job.entries[0] || {};
          confirmation.hidden = true;
          clear(outcome);
          append(
            outcome,
            el(
              'p',
              { className: 'outcome', 'data-testid': 'replay-status' },
              'Replay of ' +
                id +
                ': ' +
                entry.status +
                (entry.error ? ' (' + entry.error + ')' : '') +
                (entry.stillQueued ? ' — the entry is still in the tool DLQ' : ' — removed from the tool DLQ'),
            ),
          );
          setStatus('Replay of ' + id + ': ' + entry.status);
        },
        function (error) {
          confirm.disabled = false;
          cancel.disabled = false;
          showError(error);
        },
      );
    });
    return el(
      'section',
      { className: 'card', 'aria-labelledby': 'replay-title' },
      el('h3', { id: 'replay-title', text: 'Replay' }),
      el('p', { text: detail.replayPlan }),
      replay,
      confirmation,
      outcome,
    );
  }

  function entryFacts(detail) {
    var row = detail.row;
    var applied = detail.ledger.filter(function (call) {
      return call.outcome === 'applied';
    }).length;
    return el(
      'dl',
      { className: 'facts', 'data-testid': 'entry-facts' },
      el('dt', { text: 'Run' }),
      el('dd', { text: row.runId }),
      el('dt', { text: 'Kind' }),
      el('dd', { text: detail.kind }),
      el('dt', { text: 'Cause' }),
      el('dd', { text: row.cause }),
      el('dt', { text: 'Attempts' }),
      el('dd', { text: row.attempts === null ? '–' : row.attempts }),
      el('dt', { text: 'First seen' }),
      el('dd', { text: row.firstSeenAt + ' (' + duration(row.ageMs) + ' ago)' }),
      el('dt', { text: 'Tokens spent' }),
      el('dd', { text: num(row.tokens.input) + ' input / ' + num(row.tokens.output) + ' output' }),
      el('dt', { text: 'Conversation expires in' }),
      el('dd', { text: row.expiry === 'gone' ? 'expired' : (row.expiry === 'estimated' ? '≈ ' : '') + duration(row.expiresInMs) }),
      el('dt', { text: 'Side effects already applied' }),
      el('dd', { 'data-testid': 'applied-count', text: String(applied) }),
      el('dt', { text: 'Breaker' }),
      el(
        'dd',
        { 'data-testid': 'entry-breaker' },
        detail.breakers.length
          ? detail.breakers.map(function (breaker) {
              return el('span', {
                className: 'state-' + breaker.state,
                text: breaker.key + ': ' + breaker.state + (breaker.lastError ? ' (' + breaker.lastError + ')' : ''),
              });
            })
          : 'no record (closed)',
      ),
    );
  }

  // A section whose body is folded away until opened (long texts: the conversation, the stored entry).
  function folded(title, testid, body) {
    return el('details', { className: 'fold', 'data-testid': testid }, el('summary', null, el('h3', { text: title })), body);
  }

  function renderToolEntry(view, id) {
    clear(view);
    append(view, el('p', { text: 'Loading entry ' + id + '…' }));
    viewRead('/api/tool/entries/' + encodeURIComponent(id)).then(
      function (detail) {
        clear(view);
        var ledger = detail.ledger.length
          ? table(
              'Ledger: calls of this run and what a replay does with them',
              ['Step', { text: 'Call', num: true }, 'Tool', 'Outcome', 'Key'],
              detail.ledger.map(function (call) {
                var text =
                  call.outcome === 'applied'
                    ? 'applied — a replay will not redo it'
                    : call.outcome === 'failed'
                      ? 'failed — a replay re-executes it'
                      : 'not recorded — a replay runs it';
                return [call.step, call.callIndex, call.toolName, text, call.key];
              }),
              { testid: 'ledger' },
            )
          : el('p', { className: 'muted', 'data-testid': 'ledger', text: 'No call of this run is recorded in the ledger.' });
        var messages = detail.conversation.messages.length;
        append(view, [
          el('p', null, el('a', { href: '#/tool', text: '← Tool DLQ' })),
          el('h2', { text: 'Tool-DLQ entry ' + detail.id }),
          failedCallSection(detail),
          replaySection(detail, id),
          el(
            'section',
            { 'aria-labelledby': 'envelope-title' },
            el('h3', { id: 'envelope-title', text: 'The envelope the model saw' }),
            detail.envelope
              ? el('pre', { 'data-testid': 'envelope', text: detail.envelope.parsed ? json(detail.envelope.parsed) : detail.envelope.text })
              : el('p', { className: 'muted', text: 'No failed envelope was recorded (a model or run failure).' }),
          ),
          entryFacts(detail),
          el('section', { 'aria-labelledby': 'ledger-title' }, el('h3', { id: 'ledger-title', text: 'Side effects already applied' }), ledger),
          detail.conversation.available
            ? folded('Conversation up to the failed call (' + plural(messages, 'message') + ', redacted)', 'conversation-fold', conversationList(detail))
            : el('p', { className: 'muted', text: 'The conversation is gone (its TTL passed): a replay ends expired.' }),
          el(
            'section',
            { 'aria-labelledby': 'developer-title' },
            el('h3', { id: 'developer-title', text: 'Developer record (failure log, joined by trace_id)' }),
            el('p', { className: 'muted', text: detail.developerRecordNote }),
            detail.developerRecord ? el('pre', { 'data-testid': 'developer-record', text: json(detail.developerRecord) }) : null,
          ),
          folded('The entry as stored', 'raw-entry', el('pre', { text: json(detail.entry) })),
        ]);
        view.focus();
      },
      function (error) {
        clear(view);
        append(view, [
          el('p', null, el('a', { href: '#/tool', text: '← Tool DLQ' })),
          el('p', { className: 'status error', role: 'alert', 'data-testid': 'entry-missing', text: error.message }),
        ]);
      },
    );
  }

  // ── message DLQ
  function renderMessageList(view, params) {
    var limit = Number(params.get('limit') || 50);
    var offset = Number(params.get('offset') || 0);
    var filter = { group: params.get('group') || '', text: params.get('text') || '' };
    clear(view);
    var form = el(
      'form',
      { className: 'filters', role: 'search', 'aria-label': 'Filter the message DLQ' },
      labelled('Cause', el('input', { name: 'group', value: filter.group, id: 'message-filter-group' })),
      labelled('Text (id, code, detail)', el('input', { name: 'text', value: filter.text, type: 'search', id: 'message-filter-text' })),
      el('button', { type: 'submit', text: 'Apply filter' }),
      el('a', { href: '#/message', text: 'Clear' }),
    );
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var next = {};
      new window.FormData(form).forEach(function (value, key) {
        next[key] = value;
      });
      location.hash = '#/message' + query(next);
    });
    var purgeInput = el('input', { name: 'confirm', id: 'purge-message-confirm', autocomplete: 'off' });
    var purgeForm = el(
      'form',
      { className: 'actions', 'aria-label': 'Purge the message DLQ' },
      labelled('Type “purge message” to confirm', purgeInput),
      el('button', { type: 'submit', className: 'danger', text: 'Purge the message DLQ' }),
    );
    purgeForm.addEventListener('submit', function (event) {
      event.preventDefault();
      api('/api/message/purge', { method: 'POST', body: { confirm: purgeInput.value } }).then(function (result) {
        setStatus('Purged ' + plural(result.purged, 'entry') + ' from the message DLQ.');
        route();
      }, showError);
    });
    var holder = el('div', { 'data-testid': 'message-list' }, el('p', { text: 'Loading…' }));
    append(view, [el('h2', { text: 'Message DLQ' }), form, canAct() ? purgeForm : null, holder]);
    view.focus();
    viewRead('/api/message/entries' + query(Object.assign({ limit: limit, offset: offset }, filter))).then(function (page) {
      clear(holder);
      append(holder, [
        el('p', {
          role: 'status',
          text: page.rows.length
            ? 'Entries ' +
              (page.offset + 1) +
              '–' +
              (page.offset + page.rows.length) +
              ' of ' +
              (page.totalExact ? num(page.total) : 'at least ' + num(page.total))
            : 'No entry matches.',
        }),
        table(
          'Message-DLQ entries, oldest first',
          ['Entry', 'Cause', 'Message id', 'Received', 'Detail'],
          page.rows.map(function (row) {
            return [
              el('a', { href: '#/message/' + encodeURIComponent(row.id), text: row.id }),
              row.group,
              row.messageId,
              row.receivedAt + ' (' + duration(row.ageMs) + ' ago)',
              row.detail,
            ];
          }),
          { testid: 'message-entries' },
        ),
        pager('#/message', params, page),
      ]);
    }, showError);
  }

  // Redrive a message-DLQ entry: back on the run queue (as received, or with a fixed body), once.
  function redriveSection(id) {
    var fixed = el('textarea', { id: 'redrive-body', name: 'body', rows: '4', spellcheck: 'false', placeholder: '{"input": "…"}' });
    var start = el('button', { type: 'button', 'data-testid': 'redrive-one', text: 'Redrive…', disabled: !canAct() });
    var confirm = el('button', { type: 'button', 'data-testid': 'redrive-confirm', text: 'Confirm the redrive' });
    var cancel = el('button', { type: 'button', className: 'secondary', text: 'Cancel' });
    var what = el('p', { 'data-testid': 'redrive-what' });
    var confirmation = el('div', { className: 'confirm', hidden: true }, what, confirm, cancel);
    var outcome = el('div', { 'aria-live': 'polite' });
    start.addEventListener('click', function () {
      clear(what);
      append(
        what,
        fixed.value.trim() === ''
          ? 'The message goes back on the run queue with its body as received, and leaves the message DLQ.'
          : 'The message goes back on the run queue with the body above, and leaves the message DLQ.',
      );
      confirmation.hidden = false;
      start.disabled = true;
      confirm.focus();
    });
    cancel.addEventListener('click', function () {
      confirmation.hidden = true;
      start.disabled = !canAct();
    });
    confirm.addEventListener('click', function () {
      confirm.disabled = true;
      var body = fixed.value.trim() === '' ? {} : { body: fixed.value };
      api('/api/message/entries/' + encodeURIComponent(id) + '/redrive', { method: 'POST', body: body }).then(
        function (result) {
          confirmation.hidden = true;
          clear(outcome);
          append(
            outcome,
            el('p', {
              className: 'outcome',
              'data-testid': 'redrive-status',
              text: 'Redriven ' + id + ': enqueued as ' + result.messageId + (result.removed ? '; removed from the message DLQ' : ''),
            }),
          );
          setStatus('Redriven ' + id);
        },
        function (error) {
          confirm.disabled = false;
          showError(error);
        },
      );
    });
    return el(
      'section',
      { className: 'card', 'aria-labelledby': 'redrive-title' },
      el('h3', { id: 'redrive-title', text: 'Redrive' }),
      el('p', {
        text: 'Fix the body and put the message back on the run queue (once, as toolrun dlq redrive does). Leave the field empty to send the body as received.',
      }),
      labelled('Fixed body (JSON)', fixed),
      start,
      confirmation,
      outcome,
    );
  }

  function renderMessageEntry(view, id) {
    clear(view);
    viewRead('/api/message/entries/' + encodeURIComponent(id)).then(function (detail) {
      append(view, [
        el('p', null, el('a', { href: '#/message', text: '← Message DLQ' })),
        el('h2', { text: 'Message-DLQ entry ' + detail.id }),
        el(
          'dl',
          { className: 'facts' },
          el('dt', { text: 'Code' }),
          el('dd', { text: detail.reason.code }),
          el('dt', { text: 'Detail' }),
          el('dd', { text: detail.reason.detail }),
          el('dt', { text: 'Message id' }),
          el('dd', { text: detail.messageId || '–' }),
          el('dt', { text: 'Received' }),
          el('dd', { text: detail.receivedAt || '–' }),
        ),
        detail.reason.fields.length
          ? table(
              'Field-level reason',
              ['Path', 'Problem', 'Expected', 'Received'],
              detail.reason.fields.map(function (field) {
                return [field.path || '/', field.problem, field.expected, field.received];
              }),
              { testid: 'message-fields' },
            )
          : el('p', { className: 'muted', text: 'No field-level problem (the body could not be parsed or read).' }),
        el('h3', { text: 'Raw body' + (detail.rawBodyTruncated ? ' (cut at the size bound)' : '') }),
        el('p', { className: 'muted', text: detail.notice }),
        el('pre', { 'data-testid': 'raw-body', text: detail.rawBody }),
        redriveSection(id),
      ]);
      view.focus();
    }, showError);
  }

  // ── jobs
  function renderJob(view, id) {
    clear(view);
    var holder = el('div', { 'data-testid': 'job' });
    append(view, [el('h2', { text: 'Replay job' }), holder]);
    var cancel = el('button', { type: 'button', className: 'secondary', text: 'Cancel after the current batch' });
    cancel.addEventListener('click', function () {
      api('/api/jobs/' + encodeURIComponent(id) + '/cancel', { method: 'POST', body: {} }).then(function () {
        setStatus('Cancelling…');
      }, showError);
    });
    function tick() {
      viewRead('/api/jobs/' + encodeURIComponent(id)).then(function (job) {
        clear(holder);
        append(holder, [
          el(
            'p',
            null,
            el('label', {
              for: 'job-progress',
              text: job.type + ' · ' + job.state + ' · ' + job.done + ' of ' + job.total + ' replayed · ' + job.removed + ' removed ',
            }),
            el('progress', { id: 'job-progress', max: String(Math.max(1, job.total)), value: String(job.done) }),
          ),
          el('p', {
            'data-testid': 'job-state',
            'data-state': job.state,
            text:
              'State: ' +
              job.state +
              ' · outcomes: ' +
              counts(job.outcomes) +
              (job.ratePerSecond ? ' · at most ' + job.ratePerSecond + '/s' : '') +
              (job.error ? ' · error: ' + job.error : ''),
          }),
          job.state === 'running' ? cancel : null,
          table(
            'Outcome per entry',
            ['Entry', 'Run', 'Outcome', 'Still in the tool DLQ'],
            job.entries.map(function (entry) {
              return [
                el('a', { href: '#/tool/' + encodeURIComponent(entry.id), text: entry.id }),
                entry.runId,
                entry.status + (entry.error ? ' (' + entry.error + ')' : ''),
                entry.stillQueued ? 'yes' : 'no',
              ];
            }),
            { testid: 'job-entries' },
          ),
        ]);
        if (job.state === 'running') pollTimer = setTimeout(tick, 400);
      }, showError);
    }
    tick();
  }

  function renderJobs(view) {
    clear(view);
    viewRead('/api/jobs').then(function (result) {
      append(view, [
        el('h2', { text: 'Replay jobs' }),
        result.jobs.length
          ? table(
              'Jobs of this dashboard, newest first',
              ['Job', 'Type', 'State', { text: 'Done', num: true }, { text: 'Total', num: true }, 'Outcomes'],
              result.jobs.map(function (job) {
                return [el('a', { href: '#/jobs/' + job.id, text: job.id.slice(0, 8) }), job.type, job.state, job.done, job.total, counts(job.outcomes)];
              }),
            )
          : el('p', { className: 'muted', text: 'No replay was started from this dashboard yet.' }),
      ]);
    }, showError);
  }

  // ── router
  function showError(error) {
    setStatus((error.status === 401 ? 'Refused: ' : 'Error: ') + error.message, true);
  }

  function route() {
    viewNumber += 1;
    if (pollTimer) clearTimeout(pollTimer);
    var view = document.getElementById('view');
    var hash = location.hash.replace(/^#/, '') || '/overview';
    var queryAt = hash.indexOf('?');
    var path = queryAt >= 0 ? hash.slice(0, queryAt) : hash;
    var params = new URLSearchParams(queryAt >= 0 ? hash.slice(queryAt + 1) : '');
    var parts = path.split('/').filter(Boolean);
    var section = parts[0] || 'overview';
    Array.prototype.forEach.call(document.querySelectorAll('[data-nav]'), function (link) {
      if (link.getAttribute('data-nav') === section) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    });
    if (section === 'tool' && parts[1]) return renderToolEntry(view, decodeURIComponent(parts[1]));
    if (section === 'tool') return renderToolList(view, params);
    if (section === 'message' && parts[1]) return renderMessageEntry(view, decodeURIComponent(parts[1]));
    if (section === 'message') return renderMessageList(view, params);
    if (section === 'jobs' && parts[1]) return renderJob(view, decodeURIComponent(parts[1]));
    if (section === 'jobs') return renderJobs(view);
    clear(view);
    append(view, el('p', { text: 'Loading the overview…' }));
    viewRead('/api/overview').then(function (data) {
      renderOverview(view, data);
    }, showError);
  }

  function start() {
    var form = document.getElementById('token-form');
    var input = document.getElementById('token-input');
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, input.value.trim());
      input.value = '';
      loadSession().then(function () {
        setStatus(session && session.tokenValid ? 'Token accepted.' : 'That token is not this dashboard’s.', !(session && session.tokenValid));
        route();
      });
    });
    window.addEventListener('hashchange', function () {
      setStatus('');
      route();
    });
    loadSession().then(route);
  }

  function loadSession() {
    return api('/api/session').then(
      function (result) {
        session = result;
        document.getElementById('store').textContent =
          'Store: ' + result.store + (result.readOnly ? ' · read-only' : '') + (result.tokenValid ? ' · token accepted' : ' · no token: actions are refused');
      },
      function (error) {
        session = null;
        showError(error);
      },
    );
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
