/** The app's entry: its styles and the root component, into the page's one element. */
import { render } from 'preact';
import { App } from './app.js';
import './styles.css';

const root = document.getElementById('app');
if (root) render(<App />, root);
