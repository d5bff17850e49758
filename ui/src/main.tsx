/**
 * The object store's web UI: a shell with the page list and the freeze state, and hash routing
 * (`#/volumes/3`), so the server serves one index.html and no route of the UI can 404 on reload.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { Badge } from './components.js';
import { usePoll } from './poll.js';
import { Buckets } from './pages/buckets.js';
import { Faults } from './pages/faults.js';
import { Maintenance } from './pages/maintenance.js';
import { Overview } from './pages/overview.js';
import { Provision } from './pages/provision.js';
import { Volumes } from './pages/volumes.js';
import './style.css';

const PAGES = [
  { id: 'overview', title: 'Overview' },
  { id: 'volumes', title: 'Volumes' },
  { id: 'provision', title: 'Provisioning' },
  { id: 'faults', title: 'Faults' },
  { id: 'maintenance', title: 'Maintenance' },
  { id: 'buckets', title: 'Buckets' },
] as const;

type PageId = (typeof PAGES)[number]['id'];

interface Route {
  page: PageId;
  /** the volume in `#/volumes/<id>` */
  id: number | null;
}

function parse(hash: string): Route {
  const [page, id] = hash.replace(/^#\/?/, '').split('/');
  const known = PAGES.find((p) => p.id === page);
  return { page: known?.id ?? 'overview', id: id && /^\d+$/.test(id) ? Number(id) : null };
}

function useRoute(): Route {
  const [route, setRoute] = useState(() => parse(location.hash));
  useEffect(() => {
    const on = () => setRoute(parse(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'overview':
      return <Overview />;
    case 'volumes':
      return <Volumes selected={route.id} />;
    case 'provision':
      return <Provision />;
    case 'faults':
      return <Faults />;
    case 'maintenance':
      return <Maintenance />;
    case 'buckets':
      return <Buckets />;
  }
}

function App() {
  const route = useRoute();
  const freeze = usePoll(() => api.get<{ frozen: boolean }>('/$/maintenance-freeze'), [], 5000);
  useEffect(() => {
    document.title = `${PAGES.find((p) => p.id === route.page)!.title} · Object store`;
  }, [route.page]);
  return (
    <>
      <header class="top">
        <strong class="brand">Object store</strong>
        <nav>
          {PAGES.map((p) => (
            <a key={p.id} href={`#/${p.id}`} class={route.page === p.id ? 'current' : ''} aria-current={route.page === p.id ? 'page' : undefined}>
              {p.title}
            </a>
          ))}
        </nav>
        {freeze.data?.frozen && <Badge tone="warn">maintenance frozen</Badge>}
      </header>
      <main data-page={route.page}>
        <h1>{PAGES.find((p) => p.id === route.page)!.title}</h1>
        <Page route={route} />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
