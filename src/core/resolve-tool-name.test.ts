import { describe, expect, it } from 'vitest';
import { createToolNameResolver, damerauLevenshtein } from './resolve-tool-name.ts';

const matched = (name: string) => ({ match: name, closest: name, candidates: [name] });

describe('createToolNameResolver: equivalent spellings (match)', () => {
  const resolve = createToolNameResolver(['math.factorial', 'search_web', 'get_weather', 'send-email', 'files/read']);

  it.each([
    ['math.factorial', 'math.factorial'],
    ['math_factorial', 'math.factorial'],
    ['Math.Factorial', 'math.factorial'],
    ['MATH_FACTORIAL', 'math.factorial'],
    ['math-factorial', 'math.factorial'],
    ['math/factorial', 'math.factorial'],
    ['math:factorial', 'math.factorial'],
    ['mathFactorial', 'math.factorial'],
    ['search.web', 'search_web'],
    ['SearchWeb', 'search_web'],
    ['getWeather', 'get_weather'],
    ['send_email', 'send-email'],
    ['files_read', 'files/read'],
  ])('%s → %s', (requested, expected) => {
    expect(resolve(requested)).toEqual(matched(expected));
  });

  it.each([
    ['functions.math_factorial', 'math.factorial'],
    ['functions.search_web', 'search_web'],
    ['default_api:get_weather', 'get_weather'],
    ['default_api.get_weather', 'get_weather'],
    ['tools.search_web', 'search_web'],
    ['Functions.Search_Web', 'search_web'],
    ['functions.default_api.search_web', 'search_web'],
    ['mcp__weather__get_weather', 'get_weather'],
    ['mcp__my_server__search_web', 'search_web'],
    ['"search_web"', 'search_web'],
    ['search_web()', 'search_web'],
    ['  search_web  ', 'search_web'],
  ])('strips known prefixes and wrappers: %s → %s', (requested, expected) => {
    expect(resolve(requested)).toEqual(matched(expected));
  });

  it('resolves a dropped namespace when one name ends with it', () => {
    expect(resolve('factorial')).toEqual(matched('math.factorial'));
    expect(resolve('Factorial')).toEqual(matched('math.factorial'));
    expect(resolve('functions.factorial')).toEqual(matched('math.factorial'));
    expect(resolve('read')).toEqual(matched('files/read'));
  });

  it('resolves an MCP-namespaced name called without its namespace', () => {
    const mcp = createToolNameResolver(['mcp__github__create_issue', 'mcp__github__list_issues']);
    expect(mcp('create_issue')).toEqual(matched('mcp__github__create_issue'));
  });
});

describe('createToolNameResolver: ambiguity never yields a match', () => {
  it('a dropped namespace shared by two names: suggestions only', () => {
    const resolve = createToolNameResolver(['triangle_properties.get', 'circle_properties.get']);
    expect(resolve('get')).toEqual({ closest: 'triangle_properties.get', candidates: ['triangle_properties.get', 'circle_properties.get'] });
  });

  it('two names equal up to separators: the one with the same separators wins, else none', () => {
    const resolve = createToolNameResolver(['get_weather', 'getweather']);
    expect(resolve('GET_WEATHER')).toEqual(matched('get_weather'));
    // equal ignoring case is stronger evidence than camelCase humps
    expect(resolve('GetWeather')).toEqual(matched('getweather'));
    expect(resolve('get.weather')).toEqual(matched('get_weather'));
    expect(resolve('GETWEATHER')).toEqual(matched('getweather'));
    const three = createToolNameResolver(['get_weather', 'get-weather', 'getweather']);
    expect(three('get.weather')).toEqual({ closest: 'get_weather', candidates: ['get_weather', 'get-weather', 'getweather'] });
  });

  it('names differing only in case: the exact case-insensitive one wins only when unique', () => {
    const resolve = createToolNameResolver(['Search', 'search']);
    expect(resolve('SEARCH').match).toBeUndefined();
    expect(resolve('SEARCH').candidates).toEqual(['Search', 'search']);
  });

  it('a request equal to one name up to separators and to another with its namespace dropped: suggestions only', () => {
    // BFCL: `circle_area` may be `circle.area` with `_` for `.`, or `math.circle_area` without `math.`
    const resolve = createToolNameResolver(['circle.area', 'math.circle_area']);
    expect(resolve('circle_area')).toEqual({ closest: 'math.circle_area', candidates: ['math.circle_area', 'circle.area'] });
    expect(resolve('circle.area')).toEqual(matched('circle.area'));
    expect(resolve('Circle.Area')).toEqual(matched('circle.area'));
  });

  it('typos are suggestions, never matches', () => {
    const resolve = createToolNameResolver(['search_web', 'get_weather']);
    expect(resolve('serch_web')).toEqual({ closest: 'search_web', candidates: ['search_web'] });
    expect(resolve('get_waether')).toEqual({ closest: 'get_weather', candidates: ['get_weather'] });
  });
});

describe('createToolNameResolver: suggestions (closest)', () => {
  const resolve = createToolNameResolver(['math.factorial', 'math.gcd', 'search_web', 'search_news', 'get_weather', 'calculate_bmi']);

  it('the SPEC example: search_web_v2 → search_web', () => {
    expect(resolve('search_web_v2')).toEqual({ closest: 'search_web', candidates: ['search_web'] });
  });

  it('wrong namespace: physics.factorial → math.factorial (also with _)', () => {
    expect(resolve('physics.factorial')).toEqual({ closest: 'math.factorial', candidates: ['math.factorial'] });
    expect(resolve('physics_factorial')).toEqual({ closest: 'math.factorial', candidates: ['math.factorial'] });
  });

  it('dropped namespace with a typo', () => {
    expect(resolve('factorail').closest).toBe('math.factorial');
    expect(resolve('factorail').match).toBeUndefined();
  });

  it('ranks up to 3 candidates, best first', () => {
    const result = resolve('search_new');
    expect(result.closest).toBe('search_news');
    expect(result.candidates[0]).toBe('search_news');
    expect(result.candidates).toContain('search_web');
    expect(result.candidates.length).toBeLessThanOrEqual(3);
  });

  it('suggests nothing for an unrelated name', () => {
    expect(resolve('book_flight')).toEqual({ candidates: [] });
    expect(resolve('')).toEqual({ candidates: [] });
    expect(resolve('x')).toEqual({ candidates: [] });
  });

  it('accepts about one edit in three characters, no more', () => {
    // `calculate_bmi` → 12 letters: up to 4 edits
    expect(resolve('calculat_bni').closest).toBe('calculate_bmi');
    expect(resolve('kalkulate_bni').closest).toBe('calculate_bmi');
    expect(resolve('kalkulat_pni').closest).toBeUndefined();
  });

  it('an empty catalogue resolves nothing; duplicates are ignored', () => {
    expect(createToolNameResolver([])('search')).toEqual({ candidates: [] });
    expect(createToolNameResolver(['a_b', 'a_b'])('A_B')).toEqual(matched('a_b'));
  });
});

describe('damerauLevenshtein (optimal string alignment)', () => {
  it.each([
    ['', '', 0],
    ['', 'abc', 3],
    ['abc', '', 3],
    ['abc', 'abc', 0],
    ['abc', 'abd', 1],
    ['abc', 'acb', 1],
    ['abc', 'abcd', 1],
    ['abcd', 'acd', 1],
    ['ca', 'abc', 3], // OSA: no substring edited twice (true Damerau-Levenshtein gives 2)
    ['kitten', 'sitting', 3],
    ['factorial', 'factorail', 1],
  ])('%j ↔ %j = %d', (a, b, expected) => {
    expect(damerauLevenshtein(a, b)).toBe(expected);
    expect(damerauLevenshtein(b, a)).toBe(expected);
  });

  it('stops early past maxDistance and returns maxDistance + 1', () => {
    expect(damerauLevenshtein('abcdefgh', 'zyxwvuts', 2)).toBe(3);
    expect(damerauLevenshtein('kitten', 'sitting', 3)).toBe(3);
    expect(damerauLevenshtein('kitten', 'sitting', 2)).toBe(3);
  });
});
